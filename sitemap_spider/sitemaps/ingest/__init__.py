"""`scrapy publish`'s inputs: the readers of each format, the fast encoders, and the workers
that feed their chunks into a set."""
