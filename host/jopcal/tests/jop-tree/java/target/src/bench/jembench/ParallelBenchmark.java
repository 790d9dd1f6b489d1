package jembench;

/** Work split into workers: getWorker() hands out the next one. */
public abstract class ParallelBenchmark {
    public abstract Runnable getWorker();
}
