"""Real Storm and Kafka daemons in the loop (issue 39): every view held against what the system's own API
says about the same running cluster.

``harness.py`` is generic: pinned jars fetched once with Maven (``make jars``, ``tests/real/pom.xml``) into
``.cache/jars/<profile>/``, JVM daemons started with their logs under the run's folder, waited for by
their own readiness and stopped on any exit of the test run (``kill -9`` of it included: each daemon dies
with its parent, ``PR_SET_PDEATHSIG``, and a pid file the next run sweeps), Java sources compiled against
a profile's jars. ``kafka.py`` runs a Kafka cluster in ZooKeeper mode on it, and ``truth.py`` what Kafka's
own AdminClient and commands say (``java/KafkaTruth.java``); ``scenario.py`` drives the scenarios
through Kafka's tools, ``compare.py`` holds zkstorm's views to Kafka's answers fact by fact, and
``capture.py`` keeps the real znode bytes for the tests that need no Java (``tests/data/real``). Storm the
same way: ``storm.py`` runs Storm 2.8.3's LocalCluster and asks Nimbus's Thrift API
(``java/StormTruth.java``), ``storm_scenario.py`` drives it through Storm's API, ``storm_views.py`` and
``storm_compare.py`` hold zkstorm's Storm views to Nimbus's answers.
"""
