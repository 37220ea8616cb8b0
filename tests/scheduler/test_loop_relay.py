"""nlgscore.scheduler.loop_relay: answers from a worker thread reach their awaiting coroutines as
``asyncio.wrap_future`` hands them (result, exception, cancellation both ways), many per wake-up."""

import asyncio
import threading
from concurrent.futures import Future

import pytest

from nlgscore.scheduler.loop_relay import relay


def test_results_exceptions_and_cancellations_reach_their_waiters():
    async def main():
        answers = [Future() for _ in range(4)]
        waiters = [relay(answer) for answer in answers]

        def worker():
            answers[0].set_result("a")
            answers[1].set_exception(ValueError("bad call"))
            answers[2].cancel()
            answers[3].set_result("d")

        threading.Thread(target=worker).start()
        return await asyncio.gather(*waiters, return_exceptions=True)

    got = asyncio.run(main())
    assert got[0] == "a" and isinstance(got[1], ValueError) and str(got[1]) == "bad call"
    assert isinstance(got[2], asyncio.CancelledError) and got[3] == "d"


def test_cancelling_the_waiter_cancels_the_answer():
    async def main():
        answer = Future()
        waiter = relay(answer)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        return answer

    assert asyncio.run(main()).cancelled()  # a queued call whose caller left is dropped


def test_answers_of_one_run_wake_the_loop_once():
    wakeups = []

    async def main():
        loop = asyncio.get_running_loop()
        plain = loop.call_soon_threadsafe

        def counted(callback, *args, **kwargs):
            wakeups.append(callback)
            return plain(callback, *args, **kwargs)

        loop.call_soon_threadsafe = (
            counted  # the loop's own method, counted: every cross-thread wake-up goes through it
        )
        answers = [Future() for _ in range(64)]
        waiters = [relay(answer) for answer in answers]

        def worker():  # a run's answers, set back to back, before the loop gets the GIL to drain
            for i, answer in enumerate(answers):
                answer.set_result(i)

        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()  # all 64 are ready before the loop runs again
        return await asyncio.gather(*waiters)

    assert asyncio.run(main()) == list(range(64))
    assert len(wakeups) == 1  # asyncio.wrap_future would ask for 64
