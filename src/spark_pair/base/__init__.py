"""What every layer uses and that imports nothing else of spark-pair: the error tree, exit
codes, settings, spark-pair's own folders, base URLs, git."""
