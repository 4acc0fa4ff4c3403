"""InferenceX's main benchmark, fixed-sequence-length throughput: random prompts of a set input
length, a set output length forced with ``ignore_eos``, ten requests per unit of concurrency,
and the latency percentiles and per-GPU throughput its processed results carry.

Free of pytest and of the session: the plugin's kind module drives it.
"""
