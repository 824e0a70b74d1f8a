"""pth-top's side of the benchmarks: start the child, fold its events, peaks, saved runs, result rows.

Never imports torch; may import configs (peaks come from the hardware catalog).
"""
