// Package gen ports the generators of YCSB's CoreWorkload to Go: what the
// ycsb workload draws to run the core workloads A to F as YCSB does.
//
// Ported from brianfrankcooper/YCSB at commit
// d9faaac85a95acd4c650a3436ac41eeaeb49c365 (master, April 2026; version
// 0.18.0-SNAPSHOT), core/src/main/java/site/ycsb/:
//
//   - Utils.java: fnvhash64 (FNVHash64), with Java's signed arithmetic
//     and Math.abs.
//   - workloads/CoreWorkload.java: buildKeyName (AppendKeyName), the
//     property keys and defaults (Properties, Defaults, Parse), init's
//     choice of generators (NewCore), nextKeynum with its retry above the
//     last acknowledged insert (Worker.NextKeynum), doInsert's and
//     doTransactionInsert's key sequences, createOperationGenerator
//     (OpChooser).
//   - generator/ZipfianGenerator.java (Zipfian, Zeta), including the
//     incremental zeta when the item count grows and η recomputed with
//     the constructor's item count, as YCSB does.
//   - generator/ScrambledZipfianGenerator.java (ScrambledZipfian):
//     ITEM_COUNT, ZETAN and the FNV fold modulo the range.
//   - generator/SkewedLatestGenerator.java (SkewedLatest).
//   - generator/UniformLongGenerator.java (UniformLong).
//   - generator/CounterGenerator.java, AcknowledgedCounterGenerator.java
//     (Counter, AckCounter: the 2^20 window, tryLock).
//   - generator/DiscreteGenerator.java (OpChooser).
//   - workloads/workloada … workloadf (Standard).
//
// What matches YCSB exactly: key names (tested against vectors a JDK
// printed from the Java code), FNV hashes, the constants, the proportions,
// the algorithms and their integer arithmetic, Java's casts included
// ((long) and (int) of a double, Long.intValue()).
//
// What does not:
//
//   - The random stream. YCSB draws from ThreadLocalRandom; here each
//     worker draws from its own seeded keydist.Rand (splitmix64), so a run
//     is reproducible from its seed but draws other numbers than a YCSB
//     run, with the same distributions.
//   - Zeta sums computed at set-up (a latest distribution's, a zipfian
//     field or scan length's) agree with Java's to about 1e-15, not bit
//     for bit: Go's math.Pow and HotSpot's Math.pow differ in the last one
//     or two bits for about a fifth of the terms i^0.99 (HotSpot's itself
//     differs from StrictMath.pow for a tenth). The scrambled zipfian uses
//     YCSB's constant ZETAN and so is exact.
//   - State YCSB shares between threads that each worker keeps its own
//     copy of here: a zipfian's zeta, which grows with the acknowledged
//     inserts. Zeta is summed term by term in order, so a worker's copy
//     holds the same sum as YCSB's shared one would for the same count.
//   - Where Java throws or exits, these return an error (a bad property,
//     a full acknowledgement window) or, for DiscreteGenerator's
//     unreachable AssertionError, the last operation.
//   - The property parser refuses what CoreWorkload would silently read
//     another way (an unknown key, "yes" for a boolean, an insertorder
//     other than hashed or ordered) and the request distributions it does
//     not port (sequential, hotspot, exponential) and field length
//     histograms.
package gen
