"""The ground every layer stands on: paths, failures, files, JSON, text, /proc, the unix-socket
HTTP client, the typed checks, a status row's words. Nothing here imports a layer above it.
"""
