"""Playing agents against each other and scoring them: ``allfives eval`` (a duplicate-format
round robin), its reports and statistics, ``allfives simulate``, and one thread per worker.
"""
