"""GitHub I/O: sans-I/O flows (what to ask GitHub) and the two drivers that ask it.

A flow is a generator that yields `ApiCall`s and receives `ApiResult`s, so the App
(async, gidgethub) and the CLI (sync, PyGithub) fetch and publish the same way.
"""
