def helper():
    return 10


VALUE = 2
