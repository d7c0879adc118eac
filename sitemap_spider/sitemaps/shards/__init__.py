"""The shards of a set: the writer and its size checks, the publish loops, the finisher, the
files and their storage, and the set builder that runs them into one published set."""
