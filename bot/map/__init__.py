"""``benchbot map``: the dispatch chain of every entry, from the facts lint, ``dispatch`` and
``serve`` use (docs/map.md).

- :mod:`bot.map.chain`: an entry's routes as nodes (config line -> workflow job -> runner label
  -> launcher -> script -> server -> client), each with its ``path:line``;
- :mod:`bot.map.build`: the map's data: lint's findings on the nodes, the blast radius;
- :mod:`bot.map.html`, :mod:`bot.map.assets`: the self-contained HTML page;
- :mod:`bot.map.links`: GitHub blob links from the checkout's ``origin``;
- :mod:`bot.map.mermaid`: an entry's chain as a Mermaid flowchart, and the pull-request
  section (each changed entry's chain before and after).
"""
