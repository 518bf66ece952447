def pick(view):
    return [view.candidates_of(view.experiences[0].id)[0].id]
