"""The model's records in the shapes that outlive a command: Parquet snapshots committed by their
manifest (``parquet``, ``manifest``, ``lock``), the diff of two of them (``diff``), and Prometheus text
exposition (``prometheus``)."""
