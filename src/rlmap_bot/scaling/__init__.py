"""What more compute buys: a run's curve fitted, forecast and compared.

Plain arrays in, plain values and result models out; nothing here reads logs or knows a front-end.
"""
