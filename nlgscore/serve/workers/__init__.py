"""Internal (module paths may change): ``nlgscore serve --workers N``, N HTTP worker processes
feeding one model process, built on the HTTP room (:mod:`nlgscore.serve.http`).

* ``supervisor.py``: the parent: binds the port, starts and restarts the processes, stops them
* ``worker_app.py``: an HTTP worker's app: the HTTP room's gate over the link
* ``link.py``: ModelProcessLink, the worker's backend: every request to the model process
* ``model_process.py``: the model process: the in-process backend behind one ZeroMQ socket
* ``ipc.py``: the messages between them (msgpack; one message, one fate)
* ``loop_socket.py``: a ZeroMQ socket read and written on the asyncio loop
"""
