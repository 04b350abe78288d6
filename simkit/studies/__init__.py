"""Studies: what plays simulations to answer a question, above the statistics of
:mod:`simkit.analysis` and the deal loops of :mod:`simkit.runner`.

:mod:`~simkit.studies.compare` (duplicate comparisons, sequential tests),
:mod:`~simkit.studies.tournament` (round robins and ratings), :mod:`~simkit.studies.tuning`
(SPSA tuning of policy parameters), :mod:`~simkit.studies.equity` (a dealt hand's equity),
:mod:`~simkit.studies.dealt` (the dealt-hand simulation), :mod:`~simkit.studies.probability`
(Monte Carlo estimates of dealt-hand events), :mod:`~simkit.studies.conditional` (the other
seats' hands given one's own).
"""
