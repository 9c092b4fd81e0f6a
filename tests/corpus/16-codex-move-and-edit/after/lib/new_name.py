NAME = 'new'
OTHER = 1
