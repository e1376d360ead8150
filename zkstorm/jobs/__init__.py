"""The PySpark history job over the snapshot datasets: its inputs, facts, metrics, incidents and report."""
