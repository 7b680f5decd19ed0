"""algo search_distill: the action_features actor fitted to a search's value of every legal move
(trainer), and its labels (label, label_batched; ray_label: as Ray tasks on a cluster).
"""
