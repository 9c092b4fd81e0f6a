import sys


def load(path):
    with open(path) as fh:
        return fh.read()


def main(argv):
    data = load(argv[1])
    print(len(data))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
