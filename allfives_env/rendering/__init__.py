"""Pictures of a game: text (``ansi``) and an RGB array drawn with Pillow.
"""
