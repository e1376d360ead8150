"""Where the tree comes from: the contract (``base``), a live ensemble (``live``), ZooKeeper's files
(``files``)."""
