"""The sorting runs: the run line (its one codec), the external sort, and the dropping of
duplicate URLs and duplicate contents."""
