"""The question set and the config: what is asked, of which corpus, in which slice."""
