"""Web Push for background transitions: which ones count (classify), the one-second grace
(delay), the devices subscribed (store), the daemon's VAPID keys (vapid) and sending (push)."""
