"""QA s39 (h6): the README's way to ship a helper module: the writer is a package."""

from . import helper


def w(view):
    return helper.pick(view)
