"""ProtoLens's own names (pure, no library): the papers' experiments and the page corpus, so
``share/tags.py`` keeps them in clear in a bundle in the core install too, where the experiments'
analyses (numpy) and the corpus builder (fontTools, PIL) are not installed. Tests keep both lists
in step with ``lab/experiments.py`` and ``pages/catalog.py``."""

EXPERIMENT_NAMES = ("ifip18-wifi", "ifip18-parallel", "cell-large", "conext20-delay",
                    "conext20-httpx", "ifip18-fairness", "student-study", "mininet-quic")
PAGE_NAMES = ("ifip18-baidu", "ifip18-google", "ifip18-live", "ifip18-twitter",
              "ifip18-wikipedia", "ifip18-reddit", "ifip18-yahoo", "ifip18-vk", "ifip18-taobao",
              "ifip18-instagram", "ifip18-qq", "ifip18-sohu", "ifip18-youtube", "ifip18-facebook",
              "ifip18-amazon", "cell-365x2k", "cell-10x435k", "cell-136-2m", "cell-136-8m",
              "cell-136-12m", "student-small", "student-medium", "student-large",
              "student-many-small", "student-many-large", "conext-6x40k", "conext-6x140k",
              "conext-6x550k", "conext-6x2300k", "conext-6x9m", "conext-48x40k", "conext-48x140k",
              "conext-48x550k", "conext-48x2300k", "conext-48x9m", "conext-96x40k",
              "conext-96x140k", "conext-96x550k", "conext-96x2300k", "conext-96x9m",
              "conext-192x40k", "conext-192x140k", "conext-192x550k", "conext-192x2300k",
              "conext-192x9m", "conext-httpx-2x2300k", "conext-httpx-2x9m", "mininet-1",
              "mininet-10", "mininet-100")
