"""A protocol-faithful Spark-class endpoint on loopback, for tests, demos and benchmarks.

Run it with `spark-pair sim` (or `python -m spark_pair.sim`); drive it from Python with
`spark_pair.sim.process.SimProcess`.
"""
