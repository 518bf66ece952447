"""QA s39 (h6): a blind writer importing a sibling module, which the sandbox cannot read."""

import helper


def w(view):
    return helper.pick(view)
