"""``allfives serve``: play, watch and replay All Fives in the browser (extra ``web``).

:mod:`allfives_agents.web.views` turns a game state into the JSON the page draws (the layout
geometry comes from :func:`allfives_env.rendering.render_image.layout_geometry`, the same placements
as the
``rgb_array`` picture); :mod:`allfives_agents.web.games` keeps the live games server-side;
:mod:`allfives_agents.web.gate` decides which agent ids a client may ask for (built-in bots and
the server's own checkpoints, never a path); :mod:`allfives_agents.web.routes` holds the routes,
the body limits and the one-line errors; :mod:`allfives_agents.web.server` is the FastAPI app
and the subcommand; ``static/`` holds the page
(plain JavaScript and SVG, no build step, nothing fetched from elsewhere).
"""
