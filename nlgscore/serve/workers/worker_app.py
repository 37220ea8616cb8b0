"""An HTTP worker of ``nlgscore serve --workers N``: the one-process server's app (its gate, its
endpoints, its answers), whose backend is the link to the model process
(:class:`~nlgscore.serve.workers.link.ModelProcessLink`).
"""

from __future__ import annotations

import contextlib
from typing import Any, AsyncIterator, Optional

from nlgscore.serve.http.gate import Gate, Settings
from nlgscore.serve.workers.link import ModelProcessLink

__all__ = ["create_worker_app"]


def create_worker_app(
    settings: Settings, address: str, alive: Any, slots: Any, slot: int, api_key: Optional[str] = None
) -> Any:
    """The Starlette app of worker ``slot``: ``app.state.nlgscore`` is its gate."""
    from nlgscore.serve.http.app import api_token, routes
    from nlgscore.serve.http.direct_app import DirectStarlette

    link = ModelProcessLink(settings, address, alive, slots, slot)
    gate = Gate(settings, link)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        await link.start()
        yield
        await link.stop()

    app = DirectStarlette(routes(gate, api_token(api_key)), lifespan=lifespan)
    app.state.nlgscore = gate
    return app
