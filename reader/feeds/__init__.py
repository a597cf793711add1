"""Feeds come in: parse RSS, Atom and JSON Feed into headlines (parse), fetch
subscriptions with a conditional GET and store what they carry (refresh), and find a
site's feed to subscribe to (discover). Nothing here queues or extracts: only a
person's tap puts an article in line."""
