"""Search: a query's exact signals (signals, logsignals) -> the candidates of each index with their features
(small: pure Python, dense: numpy) -> the calibrated ranking (ranking) -> hits (hits); `search` ties them
together, `recall` selects the past fixes shown when the gate fails."""
