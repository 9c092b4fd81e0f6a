def helper():
    return 1


VALUE = 2
