print('keep')
