"""A protocol-faithful Spark-class endpoint on loopback, for tests, demos and benchmarks.

Run it with `spark-pair sim` (or `python -m spark_pair.sim`; both are `sim.command`); drive it
from Python with `spark_pair.sim.process.SimProcess`. `demo_project` is the project `spark-pair
demo` creates and the edit the simulated model makes in it. The simulator shares no code with
the model client it stands in for (only base/).
"""
