"""The sandbox: test-grade writers and a local ZooKeeper, kept apart from the read-only library.

``server`` starts and stops a throwaway ZooKeeper; ``seed`` writes a synthetic cluster into it (the only
code in zkstorm that writes to ZooKeeper, and only to a server it started); ``synth`` makes the synthetic
Storm and Kafka clusters; ``encode`` holds the test-grade Thrift and JSON writers they are made with.
The demo, the tests and the benchmarks use it; the inspector never does.
"""
