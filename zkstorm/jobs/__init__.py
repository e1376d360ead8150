"""Jobs over the snapshot datasets: the PySpark history job and its report, and snapshot diffs."""
