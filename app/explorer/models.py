"""The Explorer's privacy-model steps: the models the sidebar asks for, their profile built off the page's
thread (with the quality figures when a quality policy is chosen), and what the page says when they cannot
apply. A mixin of ``Explorer``, which owns the parameters, the profile
in force and the worker; k-map's steps are ``KMapSteps``."""

from __future__ import annotations

import param

from microrelease.app.explorer.criteria_params import groups
from microrelease.app.explorer.population import coded_k_map
from microrelease.app.kernel_readiness import kernel_strategy
from microrelease.core import POLICIES, build_profile
from microrelease.core.criteria.controls import keyword
from microrelease.core.criteria.criterion import Scope, Statistic
from microrelease.core.criteria.registry import spec_parameters
from microrelease.core.exceptions import Cancelled, MicroreleaseError
from microrelease.core.lattice.profile import LatticeProfile
from microrelease.core.models.model_profile import build_model_profile
from microrelease.core.models.sensitive import prepare_models

# The l-diversities of the criteria registry, by the keyword of their text spec ("distinct:L" -> "distinct").
L_DIVERSITY = {keyword(cls): cls for cls in spec_parameters()["l_diversity"]}


class ModelSteps:
    """The privacy-model steps of the Explorer (see the module docstring)."""

    def _with_quality(self) -> None:
        """ARX's Loss reads the profile's share mass: built once, when such a policy is first chosen
        (a few times the plain profile's time). Under privacy models the models' profile is rebuilt
        with it (off the page, as any model profile); under k-map the K in force is rolled up again."""
        if not POLICIES[self.policy].reads_quality_profile or self.profile.quality is not None:
            return
        if self.profile is self.plain_profile:
            self.plain_profile = self.profile = build_profile(self.dataset, strategy=kernel_strategy("quality"),
                                                              quality=True)
        elif self.applied_models and not self.model_running:
            self._apply_models()
        elif self.applied_k_map is not None and self.joint is not None:
            self._use_k_map()

    def specs(self, *, needs: Statistic | None = None, scope: Scope | None = None) -> dict[str, str | None]:
        """Each generated group's text spec by API parameter (None: off), composed from this Explorer's
        values of its controls (``criteria_params``); ``needs``/``scope`` filter
        the groups as the registry's ``spec_parameters`` does."""
        return {parameter: group.spec({c.name: getattr(self, c.name) for c in group.every})
                for parameter, group in groups(needs=needs, scope=scope).items()}

    def class_criteria_off(self) -> dict[str, object]:
        """The values turning every criterion on the classes off (a new table asks for none of them)."""
        return {name: off for group in groups(scope=Scope.CLASS).values() for name, off in group.off().items()}

    def model_specs(self) -> dict[str, str]:
        """The privacy models on the sensitive values asked for, as text specs by API parameter (empty:
        none), parsed by the core's criteria registry as the command line's flags are."""
        return {p: spec for p, spec in self.specs(needs=Statistic.VALUE_COUNTS).items() if spec}

    def _apply_model_specs(self) -> None:
        """The privacy models (or k-map, or both) the sidebar asks for, applied: built off the page, said when
        they cannot apply."""
        if self.dataset is None or self._loading:
            return
        specs = self.model_specs()
        if self.k_map > 0 and not specs:
            return self._apply_k_map()
        self._stop_models()
        if self.k_map > 0 and self._population is None:
            return self._apply_k_map()  # says that k-map needs a population
        if not specs or not self.sensitive_attribute:
            self._use_models((None, ()), self.plain_profile,
                             "" if not specs else "Choose a sensitive attribute for the models.")
            return
        dataset, attribute = self.dataset, self.sensitive_attribute
        quality = POLICIES[self.policy].reads_quality_profile  # the quality policies read share mass under models too
        # k-map beside the models: the population joined into the models' walk (one profile per K)
        big_k, population = self.k_map, self._population

        def work(report, should_stop):
            try:
                applied = prepare_models(dataset, attribute, specs)
                k_map = coded_k_map(dataset, population, big_k) if big_k > 0 else None
                return applied, build_model_profile(dataset, *applied, progress=report, should_stop=should_stop,
                                                    strategy=kernel_strategy("quality" if quality else "models"),
                                                    quality=quality, k_map=k_map), k_map
            except Cancelled:
                raise
            except MicroreleaseError as exc:  # a model that does not fit the attribute: said on the page
                return exc

        self.param.update(model_running=True, model_progress=0.0)
        try:
            self._models.start(work, self._finish_models, lambda f: setattr(self, "model_progress", f), self.hand_back)
        except Exception:  # without a page, a bug surfaces here: the build is no longer running
            self.model_running = False
            raise

    def _stop_models(self) -> None:
        """Drop the model profile being built, if any (its result would answer an old question)."""
        self._models.stop()
        self._joint_running = False
        if self.model_running:
            self.param.update(model_running=False, model_progress=0.0)

    def _finish_models(self, outcome) -> None:
        self.param.update(model_running=False, model_progress=1.0)
        if isinstance(outcome, Exception):  # a model that does not fit the attribute, or (served) a bug
            reason = outcome if isinstance(outcome, MicroreleaseError) else \
                f"an internal error ({type(outcome).__name__}); the server log has the details"
            self._use_models((None, ()), self.plain_profile, f"Privacy models not applied: {reason}")
        else:
            applied, profile, k_map = outcome
            self._use_models(applied, profile, "", k_map)

    def _use_models(self, applied, profile: LatticeProfile, message: str, k_map=None) -> None:
        answer, preferred, note = self._compute(profile, self.k, self.max_sup, self.weights)
        with param.parameterized.batch_call_watchers(self):
            self.applied_frequency, self.applied_models = applied
            self.applied_k_map = k_map
            self.profile, self.selected = profile, None
            self.answer, self.preferred, self.message = answer, preferred, message or note
