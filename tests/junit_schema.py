"""Validate a JUnit XML document against tests/fixtures/junit/junit.xsd, without lxml.

No XSD validator is installed with rag-ci's development dependencies, so this reads the
schema's own declarations (it uses a small subset of XSD: global elements referenced from
sequences and choices, attributes with `use="required"`, a simple type restricted by a
pattern, `mixed` content) and checks a document against them: every element is declared and
allowed where it is, every required attribute is there and no undeclared one, each attribute
matches its type's pattern, and text appears only where the schema allows it. It reads the
XSD, so a change to the schema changes what passes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

XS = "{http://www.w3.org/2001/XMLSchema}"
JUNIT_XSD = Path(__file__).parent / "fixtures" / "junit" / "junit.xsd"


@dataclass
class Declaration:
    children: set[str] = field(default_factory=set)
    attributes: dict[str, str] = field(default_factory=dict)  # name -> type
    required: set[str] = field(default_factory=set)
    text: bool = False  # simple content (xs:string) or mixed


@dataclass
class Schema:
    elements: dict[str, Declaration]
    patterns: dict[str, re.Pattern[str]]

    @classmethod
    def read(cls, path: Path = JUNIT_XSD) -> Schema:
        root = ET.parse(path).getroot()
        patterns = {
            simple.get("name", ""): re.compile(pattern.get("value", ""))
            for simple in root.findall(f"{XS}simpleType")
            for pattern in simple.iter(f"{XS}pattern")
        }
        elements = {}
        for element in root.findall(f"{XS}element"):
            declaration = Declaration(text=element.get("type") == "xs:string")
            complex_type = element.find(f"{XS}complexType")
            if complex_type is not None:
                declaration.text = complex_type.get("mixed") == "true"
                declaration.children = {ref.get("ref", "") for ref in complex_type.iter(f"{XS}element")}
                for attribute in complex_type.iter(f"{XS}attribute"):
                    declaration.attributes[attribute.get("name", "")] = attribute.get("type", "xs:string")
                    if attribute.get("use") == "required":
                        declaration.required.add(attribute.get("name", ""))
            elements[element.get("name", "")] = declaration
        return cls(elements, patterns)

    def problems(self, document: str) -> list[str]:
        """Every way `document` breaks the schema; empty when it is valid."""
        root = ET.fromstring(document)  # raises on XML that is not well-formed
        if root.tag not in self.elements:
            return [f"root <{root.tag}> is not declared"]
        found: list[str] = []
        self._check(root, f"/{root.tag}", found)
        return found

    def _check(self, element: ET.Element, where: str, found: list[str]) -> None:
        declaration = self.elements[element.tag]
        for name in declaration.required - set(element.attrib):
            found.append(f"{where}: required attribute {name} missing")
        for name, value in element.attrib.items():
            kind = declaration.attributes.get(name)
            if kind is None:
                found.append(f"{where}: attribute {name} is not declared")
            elif kind in self.patterns and not self.patterns[kind].fullmatch(value):
                found.append(f"{where}: {name}={value!r} does not match {kind}")
        if not declaration.text and (element.text or "").strip():
            found.append(f"{where}: text is not allowed here")
        for index, child in enumerate(element):
            if child.tag not in declaration.children or child.tag not in self.elements:
                found.append(f"{where}: <{child.tag}> is not allowed in <{element.tag}>")
                continue
            if not declaration.text and (child.tail or "").strip():
                found.append(f"{where}: text is not allowed here")
            self._check(child, f"{where}/{child.tag}[{index}]", found)
