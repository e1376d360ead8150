;; Writes real Java-serialized Clojure objects, the way Storm 0.8-0.9 stored them in ZooKeeper
;; (Utils/serialize = a plain ObjectOutputStream), for tests/data/clojure/.
;;
;; Run with Debian's Clojure (apt-get install clojure):
;;   clojure scripts/clojure_streams.clj tests/data/clojure
;; Storm 0.9 shipped Clojure 1.5.1; this writes with the Clojure that runs it (1.11 on Debian 12), whose
;; collections and records carry other instance fields (__hash/__hasheq, KeySeq's iterable, LongRange,
;; chunked seqs). The decoder reads fields by name, so both must decode; tests/test_java.py checks each
;; stream against values written there by hand.

(ns backtype.storm.daemon.common)

;; The records of Storm 0.9's backtype.storm.daemon.common, field for field (docs/storm-layout.md section 9).
(defrecord StormBase [storm-name launch-time-secs status num-workers component->executors])
(defrecord Assignment [master-code-dir node->host executor->node+port executor->start-time-secs])
(defrecord SupervisorInfo [time-secs hostname assignment-id used-ports meta scheduler-meta uptime-secs])

(ns zkstorm.streams
  (:import [java.io ObjectOutputStream FileOutputStream]))

(def out-dir (first *command-line-args*))

(defn write! [name value]
  (with-open [out (ObjectOutputStream. (FileOutputStream. (str out-dir "/" name ".bin")))]
    (.writeObject out value))
  (println "wrote" name (.getName (class value))))

(defn windows
  "window -> stream -> value, with Storm 0.9's window keys: the numbers 600, 10800, 86400 (Integer, as
  stats.clj's bucket arithmetic leaves them) and the keyword :all-time."
  [f]
  (into {} (for [[w scale] [[(int 600) 1] [(int 10800) 10] [(int 86400) 50] [:all-time 100]]]
             [w (f scale)])))

;; --- collections one by one ----------------------------------------------------------------------

(write! "array-map" (array-map :a 1 "b" (long 2) 3 "c"))
(write! "hash-map" (apply hash-map (interleave (range 20) (map #(str "v" %) (range 20)))))
(write! "hash-map-with-nil-key" (hash-map nil "nothing" :k "v"))
(write! "vector-large" (vec (range 100)))                 ; a root node below the tail
(write! "vector-deep" (vec (range 1100)))                 ; two levels of nodes
(write! "list" (list 1 "two" :three))
(write! "empty-list" (list))
(write! "hash-set" (hash-set 6702 6700 6701))
(write! "sorted-set" (sorted-set 3 1 2))
(write! "sorted-map" (sorted-map "b" 2 "a" 1 "c" 3))
(write! "lazy-seq" (doall (map inc [1 2 3])))
(write! "unrealized-lazy-seq" (map inc [1 2 3]))          ; only the fn: its items are not in the stream
(write! "cons" (cons 0 (list 1 2)))
(write! "array-seq" (seq (object-array ["x" "y" "z"])))
(write! "key-seq" (keys (array-map 6700 "la" 6701 "lb")))
(write! "key-seq-of-hash-map" (keys (apply hash-map (interleave (range 6700 6712) (repeat "la")))))
(write! "key-seq-without-iterable" (clojure.lang.APersistentMap$KeySeq/create (seq (array-map 6703 "la"))))
(write! "map-seq" (seq (array-map :a 1 :b 2)))           ; entries of an array map's seq
(write! "hash-map-seq" (seq (apply hash-map (interleave (range 12) (range 100 112)))))
(write! "val-seq" (vals (array-map 1 "one" 2 "two")))
(write! "chunked-seq" (seq (vec (range 40))))
(write! "long-range" (range 6700 6704))
(write! "queue" (conj clojure.lang.PersistentQueue/EMPTY 1 2 3))
(write! "map-entry" (first {:k "v"}))
(write! "java-hash-map" (java.util.HashMap. {"x" (int 1)}))
(write! "java-array-list" (java.util.ArrayList. [1 "two"]))
(write! "java-hash-set" (java.util.HashSet. #{"a" "b"}))
(write! "with-meta" (with-meta [1 2] {:line 7}))

;; --- Storm 0.9's znodes of one topology ------------------------------------------------------------
;; sentences (1 executor: task 1) and split (2 executors: tasks 2-3 and 4), on sup-a:6700 and sup-b:6701;
;; only sup-a:6700 has a heartbeat.

(write! "stormbase"
        (backtype.storm.daemon.common/->StormBase
         "wordcount" (int 1400000000) {:type :active} (int 2) {"sentences" (int 1) "split" (int 2)}))

(write! "assignment"
        (assoc (backtype.storm.daemon.common/->Assignment
                "/var/storm/nimbus/stormdist/wordcount-1-1400000000"
                {"sup-a" "wkr-a.example.org" "sup-b" "wkr-b.example.org"}
                {[1 1] ["sup-a" 6700] [2 3] ["sup-a" 6700] [4 4] ["sup-b" 6701]}
                {[1 1] 1400000010 [2 3] 1400000010 [4 4] 1400000020})
               ;; a key the record does not declare lands in __extmap
               :scheduler-note "packed by hand"))

(write! "supervisor"
        (backtype.storm.daemon.common/->SupervisorInfo
         1400000600 "wkr-a.example.org" "sup-a"
         (keys (array-map 6700 {:storm-id "wordcount-1-1400000000"} 6701 {:storm-id "other-2-1400000000"}))
         (java.util.ArrayList. (map int [6700 6701 6702 6703])) ; supervisor.slots.ports, from the YAML
         nil
         3600))

(def spout-stats
  {:type :spout
   :emitted (windows (fn [s] {"default" (* 100 s) "__ack_init" (* 100 s)}))
   :transferred (windows (fn [s] {"default" (* 100 s) "__ack_init" (* 100 s)}))
   :acked (windows (fn [s] {"default" (* 90 s)}))
   :failed (windows (fn [s] {"default" (* 3 s)}))
   :complete-latencies (windows (fn [s] {"default" (+ 10.0 s)}))
   :rate 0.1})

(defn bolt-stats [executed latency]
  {:type :bolt
   :emitted (windows (fn [s] {"default" (* 2 executed s)}))
   :transferred (windows (fn [s] {"default" (* 2 executed s)}))
   :acked (windows (fn [s] {["sentences" "default"] (* executed s)}))
   :failed (windows (fn [s] {["sentences" "default"] 0}))
   :executed (windows (fn [s] {["sentences" "default"] (* executed s)}))
   :execute-latencies (windows (fn [s] {["sentences" "default"] latency}))
   :process-latencies (windows (fn [s] {["sentences" "default"] (* 2 latency)}))
   :rate 0.1})

(write! "workerbeat"
        {:storm-id "wordcount-1-1400000000"
         ;; a hash map, as (into {} ...) of more than eight executors would be
         :executor-stats (hash-map [1 1] spout-stats [2 3] (bolt-stats 60 1.5) [-1 -1] nil)
         :uptime 700
         :time-secs 1400000700})
