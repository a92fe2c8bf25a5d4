"""Telling people and programs what changed, off the roster's path.

Web Push for background transitions: which ones count (classify), the one-second grace
(delay), the devices subscribed (store), the daemon's VAPID keys (vapid) and sending (push).
Webhooks for programs: where one may point (destinations), the ones registered (registrations)
and delivering every matching change to them (webhooks).
"""
