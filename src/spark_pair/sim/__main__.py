"""`python -m spark_pair.sim` = `spark-pair sim`."""

from spark_pair.base import gcpolicy

if __name__ == "__main__":
    gcpolicy.hold_for_start_up()  # (on again once the server is set up: sim.command)
    from spark_pair.sim.command import command

    command(prog_name="python -m spark_pair.sim")
