"""A plugin writer with a CJK name and description (QA s51 #5: text tables padded by len())."""

from memaudit_core.plugins import oracle_writer


@oracle_writer("空の_ストア", "テスト: 何も保存しない (an empty store)")
def empty(inst, budget):
    return []
