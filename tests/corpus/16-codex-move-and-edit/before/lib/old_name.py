NAME = 'old'
OTHER = 1
