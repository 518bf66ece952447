"""MemAudit core: score LLM memory stores against the exact, certified optimum of a package.

Data flows one way: load -> validate (:mod:`.package`) -> compile (:mod:`.compiled`) ->
solve / write / sweep (:mod:`.solvers`, :mod:`.writers`, :mod:`.analysis`) -> frozen results ->
render (the CLI in :mod:`.cli`, the Streamlit app in ``app.py`` + ``pages/``).
"""

__version__ = "0.1.0"
