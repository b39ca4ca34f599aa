"""Routing: questions go to their corpora; contexts from elsewhere are leaks."""

from rag_ci.core.questionset.questions import Question
from rag_ci.core.questionset.routing import route, routing_leaks
from rag_ci.core.results import Context

CORPORA = {"mss54": None, "mss60": None}


def test_single_corpus_question_goes_to_its_corpus():
    assert route(Question(id="A", question="q", doc_id="mss60"), CORPORA) == ["mss60"]


def test_cross_corpus_question_goes_to_each_corpus():
    assert route(Question(id="A", question="q", doc_id=["mss54", "mss60"]), CORPORA) == ["mss54", "mss60"]


def test_out_of_scope_question_without_doc_id_goes_everywhere():
    assert route(Question(id="A", question="q", expect="refusal"), CORPORA) == ["mss54", "mss60"]


def test_context_from_another_corpus_is_a_leak():
    contexts = [
        Context(text="t", doc_id="mss60"),
        Context(text="t", doc_id="mss54"),
        Context(text="u", doc_id="mss54"),
    ]
    assert routing_leaks(contexts, ["mss60"]) == ["mss54"]


def test_cross_corpus_contexts_within_routed_corpora_are_fine():
    contexts = [Context(text="t", doc_id="mss60"), Context(text="t", doc_id="mss54")]
    assert routing_leaks(contexts, ["mss54", "mss60"]) == []


def test_context_without_doc_id_cannot_be_proven_in_bounds():
    assert routing_leaks([Context(text="t")], ["mss60"]) == ["<missing doc_id>"]
