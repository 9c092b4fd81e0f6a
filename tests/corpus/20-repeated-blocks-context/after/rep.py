def alpha():
    total = 0
    for item in items:
        total += item
    return total


def beta():
    total = 0
    for item in items:
        total += 2 * item
    return total
