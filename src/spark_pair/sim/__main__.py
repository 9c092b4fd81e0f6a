"""`python -m spark_pair.sim` = `spark-pair sim`."""

from spark_pair.sim.command import command

if __name__ == "__main__":
    command(prog_name="python -m spark_pair.sim")
