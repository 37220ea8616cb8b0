"""Internal (module paths may change; users import :class:`nlgscore.serve.RemoteScorer`, or call
``nlgscore.load("http://HOST:PORT")``): the client of a running ``nlgscore serve``, below the
metric table, which builds it for a URL.

* ``client.py``: RemoteScorer, a local scorer's surface over HTTP (retries, timeouts, the pool)
* ``pool.py``: the pooled HTTP clients (one for blocking calls, one per event loop)
* ``wire.py``: the request and response bodies, the one schema the client and the server share
"""
