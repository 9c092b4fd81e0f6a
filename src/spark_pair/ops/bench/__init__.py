"""`spark-pair bench`: the concurrency sweep (`sweep`) and its chart (`chart`, `svgchart`)."""
