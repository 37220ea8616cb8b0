"""The endpoints of ``nlgscore serve``, one named function per file, each ``async (request,
gate) -> response`` (:class:`nlgscore.serve.http.gate.Gate`: the settings, admission and the
drain; every scoring request goes through :meth:`~nlgscore.serve.http.gate.Gate.score`, whichever
backend scores it):

* :mod:`.health` ``GET /health``; :mod:`.prometheus` ``GET /metrics``;
* :mod:`.score` ``POST /v1/score``; :mod:`.matrix` ``POST /v1/matrix``;
* :mod:`.openrlhf` ``POST /get_reward`` (OpenRLHF's ``--remote_rm_url``);
* :mod:`.slime` ``POST /v1/reward`` (slime's ``--rm-type remote_rm --rm-url``);
* :mod:`.nemo_gym` ``POST /seed_session`` and ``POST /verify`` (a NeMo Gym resources server);
* :mod:`.roll` ``POST /roll/submit_task`` and ``GET /roll/task_result`` (ROLL's remote reward system).
"""
