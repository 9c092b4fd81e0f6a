"""One turn: context -> request -> stream -> edits -> approvals -> apply. (Being built.)"""
